"""Pins what `stats.publish` pushes: a short series and a long one (2,000 readings)."""

import numpy as np
import stats

SHORT = [3.5, -1.0, 2.25, 8.0, 0.125]
LONG = [float(i % 17) for i in range(2000)]


def test_a_short_series_is_pushed(callpin):
    with callpin.pin(spy=["sink.push", "sink.push_masked"]) as rec:
        rec.mark("total", stats.publish(SHORT))


def test_a_long_series_is_pushed(callpin):
    with callpin.pin(spy=["sink.push", "sink.push_masked"]) as rec:
        rec.mark("total", stats.publish(LONG))


def test_another_test_sets_the_print_options():
    # The scenario runs this test before the pins: numpy's repr follows these options,
    # what callpin records of an array does not.
    np.set_printoptions(precision=3, threshold=10)
