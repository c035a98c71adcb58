"""Training-loop integrations: ``batchfit.integrations.transformers.BatchFitCallback`` (a transformers
TrainerCallback) and ``batchfit.integrations.lightning.BatchFitCallback`` (a Lightning Callback). Each imports
its framework, so import the one you use."""
