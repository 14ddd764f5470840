// sidelight for Pi (sidelight-pi-extension): tells this session what its sibling sessions did.
//
// Installed by `sidelight install pi` as ~/.pi/agent/extensions/sidelight.ts; `sidelight uninstall pi`
// removes it. On each prompt (`before_agent_start`) it runs `sidelight hook pi` and, when sibling
// sessions did something new since this one last looked, adds the digest as a message after the prompt.
// It also reports `session_start` and `session_shutdown`. Before a write tool (`tool_call` of `write` or
// `edit`) it asks the stale-write guard: when sidelight refuses, the tool is blocked with its reason
// (once; the retry goes through). After any tool (`tool_result`) it asks for the news within the turn:
// a note of a sibling's change to a file this session touched, appended to the tool's result content
// (where the model reads it in its next request). Whatever goes wrong, Pi carries on: a hook that fails
// or is slow blocks nothing.
//
// stdin of `sidelight hook pi`: one JSON object
//   {"event": "before_agent_start" | "session_start" | "session_shutdown" | "before_tool" | "after_tool",
//    "session_file": PATH | null, "session_id": ID | null, "cwd": DIR, "prompt": TEXT | null,
//    "reason": TEXT | null, "tool_name": NAME, "tool_input": ARGS}  (the last two: tool events only)
// stdout: the digest text, or nothing; for before_tool, {"block": true, "reason": TEXT} to refuse the
// write, a note to send along (text), or nothing; for after_tool, a note (text) or nothing.
import { spawn } from "node:child_process";

// Pi's tools that write a file: the only ones whose `tool_call` asks sidelight (others cost nothing).
const WRITE_TOOLS = new Set(["write", "edit"]);

// The command that runs sidelight; `sidelight install pi` writes its absolute path here.
const INSTALLED_COMMAND: string[] = ["sidelight"];
// SIDELIGHT_BIN overrides it at run time (a path, or a JSON array of arguments).
// SIDELIGHT_PI_TIMEOUT_MS caps each run (default 5000 ms); the hook has its own, shorter budget.
const TIMEOUT_MS = Number(process.env.SIDELIGHT_PI_TIMEOUT_MS ?? "") || 5000;

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

function runHook(payload: Record<string, unknown>): Promise<string> {
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
      const child = spawn(bin, [...args, "hook", "pi"], { stdio: ["pipe", "pipe", "ignore"] });
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

function describe(event: string, ctx: any, extra: Record<string, unknown>): Record<string, unknown> {
  let sessionFile: string | null = null;
  let sessionId: string | null = null;
  try {
    sessionFile = ctx?.sessionManager?.getSessionFile?.() ?? null;
  } catch {
    sessionFile = null;
  }
  try {
    sessionId = ctx?.sessionManager?.getSessionId?.() ?? null;
  } catch {
    sessionId = null;
  }
  return { event, session_file: sessionFile, session_id: sessionId, cwd: ctx?.cwd ?? process.cwd(), ...extra };
}

export default function (pi: any) {
  pi.on("session_start", async (event: any, ctx: any) => {
    try {
      await runHook(describe("session_start", ctx, { reason: event?.reason ?? null }));
    } catch {
      // never break Pi
    }
  });

  pi.on("before_agent_start", async (event: any, ctx: any) => {
    try {
      const text = (await runHook(describe("before_agent_start", ctx, { prompt: event?.prompt ?? null }))).trimEnd();
      if (!text) return undefined;
      return { message: { customType: "session-update", content: text, display: true } };
    } catch {
      return undefined;
    }
  });

  pi.on("tool_call", async (event: any, ctx: any) => {
    try {
      if (!WRITE_TOOLS.has(event?.toolName)) return undefined;
      const out = (
        await runHook(describe("before_tool", ctx, { tool_name: event.toolName, tool_input: event?.input ?? null }))
      ).trim();
      if (!out) return undefined;
      if (out.startsWith("{")) {
        const answer = JSON.parse(out);
        if (answer?.block === true && typeof answer.reason === "string") return { block: true, reason: answer.reason };
        return undefined;
      }
      // A note (edit_guard = inform): it reaches the model right after the tool's result.
      pi.sendMessage({ customType: "session-update", content: out, display: true }, { deliverAs: "steer" });
      return undefined;
    } catch {
      return undefined; // never block a write on sidelight's own failure
    }
  });

  pi.on("tool_result", async (event: any, ctx: any) => {
    try {
      const text = (await runHook(describe("after_tool", ctx, { tool_name: event?.toolName ?? null }))).trim();
      if (!text || !Array.isArray(event?.content)) return undefined;
      return { content: [...event.content, { type: "text", text }] };
    } catch {
      return undefined; // never break Pi
    }
  });

  pi.on("session_shutdown", async (event: any, ctx: any) => {
    try {
      await runHook(describe("session_shutdown", ctx, { reason: event?.reason ?? null }));
    } catch {
      // never break Pi
    }
  });
}
