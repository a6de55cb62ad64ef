"""The memory file and its indexes: the connection and lock, migrations, the vectors as int8 codes, the
vocabulary, the keyword list's postings, the pairs, and the snapshot beside the file."""
