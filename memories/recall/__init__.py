"""Answering a query: reading the rows and candidate lists, ranking (the FTS5 query, fusion, the
rerank), recall and explain top to bottom, the texts' vectors kept, and the recall log."""
