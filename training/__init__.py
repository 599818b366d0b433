"""Training entry points, one subpackage per thing trained, each with its ``commands`` module (see ``dcops.cli``)."""
