"""Training (issue 23, point 3): datasets from the store, backends (``surrogate``, ``lora``),
and the model registry whose checkpoints become candidates of the promotion gate."""
