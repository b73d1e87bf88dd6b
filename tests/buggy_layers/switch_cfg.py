"""A student's config module beside the layer file (switches.py reads ``switch_cfg.TRAIN``), as ``import cfgmod``."""

TRAIN = False  # set to True by the student's training loop
