"""Legacy code: readings of a sensor are scaled and pushed to a sink, with the negative
ones masked out. A refactor must push the same arrays."""

import numpy as np
import sink

FACTOR = 1.0
CALIBRATION = {"offset": 0}


def publish(readings):
    values = np.asarray(readings, dtype=float) * FACTOR + CALIBRATION["offset"]
    sink.push(values)
    sink.push_masked(np.ma.array(values, mask=values < 0))
    return float(values.sum())
