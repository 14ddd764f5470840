// sidelight for opencode (sidelight-opencode-plugin): tells this session what its sibling sessions did.
//
// Installed by `sidelight install opencode` as ~/.config/opencode/plugin/sidelight.ts (or, with
// --scope project, .opencode/plugin/sidelight.ts); `sidelight uninstall opencode` removes it. On each
// prompt (`chat.message`) it runs `sidelight hook opencode` and, when sibling sessions did something
// new since this one last looked, stores the digest with the prompt as a synthetic, ignored text part
// (sidelight never counts a synthetic part as a prompt, so its own text is never reported back).
// opencode leaves an ignored part out of what it sends a model, the title request included (a title
// would otherwise name the session after its siblings' news); `experimental.chat.messages.transform`
// gives it back to the chat requests only, as a message of its own after the prompt, so that a title
// request made meanwhile never sees it. It also reports `session.created` and `session.deleted`.
// Whatever goes wrong, opencode carries on: every error is caught and each run is killed after a short
// timeout. Before a write tool (`tool.execute.before` of `write` or `edit`) it asks the stale-write guard:
// when sidelight refuses, it throws an Error with the reason (opencode's way to refuse a tool; once, the
// retry goes through); a note (edit_guard = inform) is appended to the tool's output after it ran. After
// any tool (`tool.execute.after`) it asks for the news within the turn (a sibling's change to a file
// this session touched), appended to the tool's output too, where the model reads it. A hook that fails
// or is slow refuses nothing.
//
// stdin of `sidelight hook opencode`: one JSON object
//   {"event": "chat.message" | "session.created" | "session.deleted" | "before_tool" | "after_tool",
//    "session_id": ID, "message_id": ID | null, "cwd": DIR, "prompt": TEXT | null,
//    "tool_name": NAME, "tool_input": ARGS}  (tool_name: the tool events; tool_input: before_tool only)
// stdout: the digest text, or nothing; for before_tool, {"block": true, "reason": TEXT} to refuse the
// write, a note (text), or nothing; for after_tool, a note (text) or nothing.
//
// No imports beyond Node's own: opencode would otherwise install packages for it.
import { spawn } from "node:child_process";

// The command that runs sidelight; `sidelight install opencode` writes its absolute path here.
const INSTALLED_COMMAND: string[] = ["sidelight"];
// SIDELIGHT_BIN overrides it at run time (a path, or a JSON array of arguments).
// SIDELIGHT_OPENCODE_TIMEOUT_MS caps each run (default 5000 ms); the hook has its own, shorter budget.
const TIMEOUT_MS = Number(process.env.SIDELIGHT_OPENCODE_TIMEOUT_MS ?? "") || 5000;

function command(): string[] {
  const override = (process.env.SIDELIGHT_BIN ?? "").trim();
  if (override.startsWith("[")) {
    try {
      const parsed = JSON.parse(override);
      if (Array.isArray(parsed) && parsed.length > 0) return parsed.map(String);
    } catch {
      // fall through to the installed command
    }
  } else if (override) {
    return [override];
  }
  return INSTALLED_COMMAND;
}

function runHook(payload: Record<string, unknown>, cwd: string): Promise<string> {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (text: string) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      resolve(text);
    };
    try {
      const [bin, ...args] = command();
      const child = spawn(bin, [...args, "hook", "opencode"], {
        cwd,
        stdio: ["pipe", "pipe", "ignore"],
      });
      timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch {
          // already gone
        }
        finish("");
      }, TIMEOUT_MS);
      child.on("error", () => finish(""));
      child.stdout?.setEncoding("utf8");
      child.stdout?.on("data", (chunk: string) => {
        out += chunk;
      });
      child.on("close", () => finish(out));
      child.stdin?.on("error", () => {});
      child.stdin?.end(JSON.stringify(payload));
    } catch {
      finish("");
    }
  });
}

// opencode's part ids: "prt_", 12 hex digits of the time (milliseconds * 4096 + a counter: ascending),
// 14 random base62 characters.
let lastTime = 0;
let counter = 0;
function partId(): string {
  const now = Date.now();
  if (now !== lastTime) {
    lastTime = now;
    counter = 0;
  }
  counter += 1;
  const stamp = (BigInt(now) * 0x1000n + BigInt(counter)).toString(16).padStart(12, "0").slice(-12);
  const letters = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let tail = "";
  for (let i = 0; i < 14; i++) tail += letters[Math.floor(Math.random() * letters.length)];
  return `prt_${stamp}${tail}`;
}

// opencode's tools that write a file: the only ones whose `tool.execute.before` asks sidelight.
const WRITE_TOOLS = new Set(["write", "edit"]);

// What marks a part as sidelight's digest (kept by opencode with the part: TextPart.metadata).
const MARK = "sidelight";

function isDigest(part: any): boolean {
  return part?.type === "text" && part?.ignored === true && part?.metadata?.[MARK] === true;
}

function promptOf(parts: any[]): string | null {
  try {
    const texts = (parts ?? [])
      .filter((p: any) => p?.type === "text" && !p?.synthetic && typeof p?.text === "string")
      .map((p: any) => p.text);
    return texts.length > 0 ? texts.join("\n") : null;
  } catch {
    return null;
  }
}

export const SidelightPlugin = async (ctx: any) => {
  const directory: string = ctx?.directory ?? process.cwd();
  // The start hook of a session still running, by session: opencode runs its event and chat.message
  // handlers at once, and the start keeps the session's handoff for its first prompt, so that prompt's
  // hook waits for it (else it looked before the handoff was kept, and the handoff was lost).
  const starting = new Map<string, Promise<string>>();
  // The guard's notes (edit_guard = inform) by tool call, appended to the tool's output once it ran.
  const notes = new Map<string, string>();
  return {
    "tool.execute.before": async (input: any, output: any) => {
      let out = "";
      try {
        if (!WRITE_TOOLS.has(input?.tool) || !input?.sessionID) return;
        out = (
          await runHook(
            {
              event: "before_tool",
              session_id: input.sessionID,
              message_id: null,
              cwd: directory,
              prompt: null,
              tool_name: input.tool,
              tool_input: output?.args ?? null,
            },
            directory,
          )
        ).trim();
        if (out && !out.startsWith("{") && input?.callID) notes.set(input.callID, out);
      } catch {
        return; // never refuse a write on sidelight's own failure
      }
      let reason: string | null = null;
      try {
        const answer = out.startsWith("{") ? JSON.parse(out) : null;
        if (answer?.block === true && typeof answer.reason === "string") reason = answer.reason;
      } catch {
        reason = null;
      }
      if (reason) throw new Error(reason);
    },
    "tool.execute.after": async (input: any, output: any) => {
      try {
        const note = input?.callID ? notes.get(input.callID) : undefined;
        if (note) {
          notes.delete(input.callID);
          if (typeof output?.output === "string") output.output = `${output.output}\n\n${note}`;
        }
        if (!input?.sessionID || typeof output?.output !== "string") return;
        const news = (
          await runHook(
            {
              event: "after_tool",
              session_id: input.sessionID,
              message_id: null,
              cwd: directory,
              prompt: null,
              tool_name: input?.tool ?? null,
            },
            directory,
          )
        ).trim();
        if (news) output.output = `${output.output}\n\n${news}`;
      } catch {
        // never break opencode
      }
    },
    "chat.message": async (input: any, output: any) => {
      try {
        const sessionID = input?.sessionID ?? output?.message?.sessionID;
        const messageID = output?.message?.id ?? input?.messageID;
        if (!sessionID || !messageID || !Array.isArray(output?.parts)) return;
        await starting.get(sessionID);
        const text = (
          await runHook(
            {
              event: "chat.message",
              session_id: sessionID,
              message_id: messageID,
              cwd: directory,
              prompt: promptOf(output.parts),
            },
            directory,
          )
        ).trimEnd();
        if (!text) return;
        output.parts.push({
          id: partId(),
          sessionID,
          messageID,
          type: "text",
          text,
          synthetic: true,
          ignored: true,
          metadata: { [MARK]: true },
        });
      } catch {
        // never break opencode
      }
    },
    "experimental.chat.messages.transform": async (_input: any, output: any) => {
      try {
        const messages = output?.messages;
        if (!Array.isArray(messages)) return;
        for (let i = messages.length - 1; i >= 0; i--) {
          const message = messages[i];
          if (message?.info?.role !== "user" || !Array.isArray(message.parts)) continue;
          const digests = message.parts.filter(isDigest);
          if (digests.length === 0) continue;
          // New objects: the stored part stays ignored for whatever else reads these messages.
          messages.splice(i + 1, 0, {
            info: { ...message.info, id: `${message.info.id}-${MARK}` },
            parts: digests.map((part: any) => ({ ...part, ignored: false })),
          });
        }
      } catch {
        // never break opencode
      }
    },
    event: async ({ event }: any) => {
      try {
        const type = event?.type;
        if (type !== "session.created" && type !== "session.deleted") return;
        const info = event?.properties?.info ?? {};
        if (!info.id || info.parentID) return; // a subagent's session is its parent's
        const run = runHook(
          { event: type, session_id: info.id, message_id: null, cwd: info.directory ?? directory, prompt: null },
          directory,
        );
        if (type === "session.created") starting.set(info.id, run);
        try {
          await run;
        } finally {
          if (starting.get(info.id) === run) starting.delete(info.id);
        }
      } catch {
        // never break opencode
      }
    },
  };
};
