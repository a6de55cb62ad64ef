"""The memory over HTTP and MCP: the contract's routes, its requests, its OpenAPI document, the
metrics, and many memories from one folder."""
