"""Helpers of the LGIP Space: input guards, the model pool, and one module per tab."""
