"""What the owner sees and takes back: the history and its undo, the contradictions queue, near
duplicates, whether a write was reviewed, and forgetting for good."""
