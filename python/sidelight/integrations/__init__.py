"""Host integrations: the Claude Code plugin files, the Pi extension and the Claude Agent SDK hook."""
