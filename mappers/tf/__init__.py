"""TensorFlow op mappers, one module per op family. Each mapper turns one TF op
into IR nodes through a MapContext (x2/frontends/common.py)."""
