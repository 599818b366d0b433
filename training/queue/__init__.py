"""Training of the learned queue-ordering policy (imitation of ATC, then MaskablePPO) and its benchmark."""
