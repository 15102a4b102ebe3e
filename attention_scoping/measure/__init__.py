"""Measurement: the `attention-scoping` command (`cli`) with `audit`, `bench` and `simulate`,
and the tools-tax figures they share (`tax`).
"""
