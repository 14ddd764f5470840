"""The watcher: one process that follows every session live (``watcher``), and the status table built
from its snapshot or from the transcripts (``status``)."""
