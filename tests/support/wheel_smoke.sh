#!/usr/bin/env bash
# The wheel works without Rust: installs a built wheel (default: the one `make wheel` left in dist/) into a
# fresh venv with PATH=/usr/bin:/bin, where neither cargo nor rustc may be, then runs `sidelight --version`,
# a scan of a sample transcript and a Claude Code prompt hook in a throwaway HOME that has one sibling
# session, whose digest it must print. Used by .ci/run and tests/test_wheel.py.
#   tests/support/wheel_smoke.sh [WHEEL]      PYTHON: the interpreter of the venv (default python3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

fail() {
    echo "wheel smoke: $*" >&2
    exit 1
}

wheel=${1:-}
if [[ -z $wheel ]]; then
    wheels=(dist/sidelight-*.whl)
    [[ ${#wheels[@]} == 1 && -f ${wheels[0]} ]] || fail "expected one wheel in dist/ (make wheel builds it), found: ${wheels[*]}"
    wheel=${wheels[0]}
fi
[[ -f $wheel ]] || fail "no wheel at $wheel"
wheel=$(realpath "$wheel")
python=$(command -v "${PYTHON:-python3}") || fail "no ${PYTHON:-python3} on PATH"

NO_RUST_PATH=/usr/bin:/bin
for tool in cargo rustc; do
    if found=$(PATH=$NO_RUST_PATH command -v "$tool"); then
        fail "$tool is on $NO_RUST_PATH ($found): this test needs a PATH without a Rust toolchain"
    fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
venv=$tmp/venv
# pip keeps its own configuration (index, certificates) but not a PATH with Rust on it; binary packages
# only, so that nothing (not sidelight, not a dependency) can be compiled on the way.
"$python" -m venv "$venv"
PATH=$NO_RUST_PATH "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary :all: "$wheel" ||
    fail "pip install $wheel failed"

home=$tmp/home
project=/tmp/sidelight-samples/claude-code/project # the cwd the sample transcript records
folder=$home/.claude/projects/-tmp-sidelight-samples-claude-code-project
mkdir -p "$folder"
cp tests/data/claude-code/four-tools-resume.jsonl "$folder/"
run() {
    env -i PATH=$NO_RUST_PATH HOME="$home" LANG=C.UTF-8 "$venv/bin/sidelight" "$@"
}

version=$(run --version) || fail "sidelight --version failed"
[[ $version == *sidelight* ]] || fail "sidelight --version printed: $version"
echo "ok  $version"

scan=$(run scan "$folder/four-tools-resume.jsonl") || fail "sidelight scan failed"
[[ $scan == *"files       1 touched: notes.txt"* ]] || fail "sidelight scan printed: $scan"
echo "ok  scan: $(grep -c . <<<"$scan") lines, notes.txt touched"

session=00000000-0000-4000-8000-000000000001
event='{"session_id": "'$session'", "transcript_path": "'$folder/$session.jsonl'", "cwd": "'$project'",
 "hook_event_name": "UserPromptSubmit", "prompt": "what did the others do?"}'
answer=$(run hook claude-code <<<"$event") || fail "sidelight hook claude-code exited $?"
[[ $answer == *'"additionalContext"'*'edited notes.txt'* ]] || fail "sidelight hook claude-code printed: $answer"
log=$home/.local/state/sidelight/sidelight.log
[[ ! -s $log ]] || fail "the hook logged: $(cat "$log")"
echo "ok  hook claude-code: told of the sibling's edit to notes.txt"
echo "wheel smoke passed: $(basename "$wheel") without cargo or rustc on PATH"
