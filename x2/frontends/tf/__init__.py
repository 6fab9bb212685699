"""TensorFlow frontend: SavedModel, frozen .pb, TF1 checkpoint + .meta, TF2
checkpoint + model definition, .keras/.h5 -> the shared IR (entry: formats.read_ir)."""
