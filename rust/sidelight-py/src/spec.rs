//! A format description, the dict `sidelight.formats.Layout.to_core` makes, read into the core's
//! [`Spec`]: every field checked for its type, every error naming its field.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use sidelight_core::formats::declared::{KeyPath, Spec, ToolEntrySpec};

/// Reads a description dict field by field; every error names its field.
struct Fields<'a, 'py> {
    dict: &'a Bound<'py, PyDict>,
    prefix: String,
}

impl Fields<'_, '_> {
    fn error(&self, key: &str, message: &str) -> PyErr {
        PyValueError::new_err(format!("{}{key}: {message}", self.prefix))
    }

    fn get(&self, key: &str) -> PyResult<Option<Bound<'_, PyAny>>> {
        Ok(self.dict.get_item(key)?.filter(|v| !v.is_none()))
    }

    fn string(&self, key: &str) -> PyResult<Option<String>> {
        match self.get(key)? {
            None => Ok(None),
            Some(v) => v
                .extract::<String>()
                .map(Some)
                .map_err(|_| self.error(key, "expected a string")),
        }
    }

    fn strings(&self, key: &str) -> PyResult<Option<Vec<String>>> {
        match self.get(key)? {
            None => Ok(None),
            Some(v) if v.is_instance_of::<pyo3::types::PyString>() => {
                Err(self.error(key, "expected a list of strings, not a string"))
            }
            Some(v) => v
                .extract::<Vec<String>>()
                .map(Some)
                .map_err(|_| self.error(key, "expected a list of strings")),
        }
    }

    fn path(&self, key: &str) -> PyResult<Option<KeyPath>> {
        self.strings(key)
    }

    fn paths(&self, key: &str) -> PyResult<Vec<KeyPath>> {
        match self.get(key)? {
            None => Ok(Vec::new()),
            Some(v) => v
                .extract::<Vec<Vec<String>>>()
                .map_err(|_| self.error(key, "expected a list of key paths (lists of strings)")),
        }
    }

    fn check_known(&self, known: &[&str]) -> PyResult<()> {
        for key in self.dict.keys() {
            let key: String = key.extract().map_err(|_| {
                PyValueError::new_err(format!("{}fields are named by strings", self.prefix))
            })?;
            if !known.contains(&key.as_str()) {
                return Err(self.error(&key, "unknown field"));
            }
        }
        Ok(())
    }
}

const SPEC_FIELDS: &[&str] = &[
    "entry_type",
    "timestamp",
    "session_id",
    "session_id_types",
    "cwd",
    "cwd_types",
    "title",
    "title_types",
    "skip_types",
    "skip_keys",
    "skip_flags",
    "message_types",
    "role",
    "user_roles",
    "assistant_roles",
    "message_id",
    "content",
    "block_type",
    "text_blocks",
    "tool_blocks",
    "result_blocks",
    "result_block_id",
    "result_block_error",
    "result_block_content",
    "skip_block_flags",
    "block_text",
    "block_name",
    "block_input",
    "block_id",
    "tool_calls",
    "tool_call_result",
    "tool_entries",
    "result_roles",
    "result_id",
    "result_error",
    "skip_prompt_prefixes",
    "primary_keys",
];

pub(crate) fn spec_from(description: &Bound<'_, PyDict>) -> PyResult<Spec> {
    let f = Fields {
        dict: description,
        prefix: String::new(),
    };
    f.check_known(SPEC_FIELDS)?;
    let d = Spec::default();
    let mut tool_entries = Vec::new();
    if let Some(entries) = f.get("tool_entries")? {
        let list = entries
            .cast::<PyList>()
            .map_err(|_| f.error("tool_entries", "expected a list of dicts"))?;
        for (k, entry) in list.iter().enumerate() {
            let entry = entry
                .cast::<PyDict>()
                .map_err(|_| f.error(&format!("tool_entries[{k}]"), "expected a dict"))?;
            let e = Fields {
                dict: entry,
                prefix: format!("tool_entries[{k}]."),
            };
            e.check_known(&["role", "name", "literal_name", "input", "primary", "id"])?;
            tool_entries.push(ToolEntrySpec {
                role: e.string("role")?.ok_or_else(|| e.error("role", "needed"))?,
                name: e.path("name")?,
                literal_name: e.string("literal_name")?,
                input: e.path("input")?,
                primary: e.path("primary")?,
                id: e.path("id")?,
            });
        }
    }
    // Absent means the default; `None` means none (for the key paths that have a default).
    let path_or = |key: &str, default: Option<KeyPath>| -> PyResult<Option<KeyPath>> {
        if description.contains(key)? {
            f.path(key)
        } else {
            Ok(default)
        }
    };
    Ok(Spec {
        entry_type: path_or("entry_type", d.entry_type)?,
        timestamp: path_or("timestamp", d.timestamp)?,
        session_id: f.path("session_id")?,
        session_id_types: f.strings("session_id_types")?.unwrap_or_default(),
        cwd: f.path("cwd")?,
        cwd_types: f.strings("cwd_types")?.unwrap_or_default(),
        title: f.path("title")?,
        title_types: f.strings("title_types")?.unwrap_or_default(),
        skip_types: f.strings("skip_types")?.unwrap_or_default(),
        skip_keys: f.strings("skip_keys")?.unwrap_or_default(),
        skip_flags: f.paths("skip_flags")?,
        message_types: f.strings("message_types")?.unwrap_or_default(),
        role: path_or("role", d.role)?,
        user_roles: f.strings("user_roles")?.unwrap_or(d.user_roles),
        assistant_roles: f.strings("assistant_roles")?.unwrap_or(d.assistant_roles),
        message_id: f.path("message_id")?,
        content: path_or("content", d.content)?,
        block_type: if description.contains("block_type")? {
            f.string("block_type")?
        } else {
            d.block_type
        },
        text_blocks: f.strings("text_blocks")?.unwrap_or(d.text_blocks),
        tool_blocks: f.strings("tool_blocks")?.unwrap_or_default(),
        result_blocks: f.strings("result_blocks")?.unwrap_or_default(),
        result_block_id: f.path("result_block_id")?.unwrap_or(d.result_block_id),
        result_block_error: path_or("result_block_error", d.result_block_error)?,
        result_block_content: path_or("result_block_content", d.result_block_content)?,
        skip_block_flags: f.strings("skip_block_flags")?.unwrap_or_default(),
        block_text: f.string("block_text")?.unwrap_or(d.block_text),
        block_name: f.string("block_name")?.unwrap_or(d.block_name),
        block_input: f.strings("block_input")?.unwrap_or(d.block_input),
        block_id: f.string("block_id")?.unwrap_or(d.block_id),
        tool_calls: f.path("tool_calls")?,
        tool_call_result: f.path("tool_call_result")?,
        tool_entries,
        result_roles: f.strings("result_roles")?.unwrap_or_default(),
        result_id: f.path("result_id")?,
        result_error: f.path("result_error")?,
        skip_prompt_prefixes: f.strings("skip_prompt_prefixes")?.unwrap_or_default(),
        primary_keys: f.strings("primary_keys")?.unwrap_or(d.primary_keys),
    })
}
