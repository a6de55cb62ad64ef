"""The embedding model: MiniLM (int8 ONNX) and how to plug in another, the numbers that belong to each
model, and the model over HTTP for a Worker run on this machine."""
