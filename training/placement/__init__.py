"""Training of the linear GPU placement policy (cross-entropy method) and its benchmark."""
