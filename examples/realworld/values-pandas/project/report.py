"""Legacy code: a day's order lines become a report frame loaded into the warehouse, and
the revenue per SKU a series. A refactor must load the same frame and the same totals."""

import pandas as pd
import warehouse


def daily_report(lines):
    frame = pd.DataFrame(lines, columns=["sku", "qty", "price", "shipped"])
    frame["shipped"] = pd.to_datetime(frame["shipped"])
    frame["revenue"] = frame["qty"] * frame["price"]
    warehouse.load("orders", frame)
    per_sku = frame.groupby("sku")["revenue"].sum()
    warehouse.totals(per_sku)
    return round(float(per_sku.sum()), 2)
