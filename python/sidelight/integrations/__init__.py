"""Host integrations: the Claude Agent SDK hook and the skill file. (The files shipped for one agent's host,
such as its plugin or extension, are in that agent's folder, ``sidelight/agents/<agent>/``.)"""
