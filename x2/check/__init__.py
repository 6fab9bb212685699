"""Checking a conversion against its source: parity (x2 check), the bisect to
the first diverging op, gradient parity, and the input ranges they draw from."""
