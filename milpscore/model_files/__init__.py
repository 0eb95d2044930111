"""Model files: saving and loading a fitted model as JSON (:mod:`.persist`) under its schema
(:mod:`.model_schema`)."""
