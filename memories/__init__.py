"""Memory Desk's memory: an agent's long-term facts with hybrid (keyword + vector) recall.

The engine (`store`, `recall`, `embeddings`) and the HTTP service (`service`) import no Django;
the dashboard reaches a memory only through `client`.
"""
