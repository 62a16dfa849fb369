"""Baselines that are Python callables rather than SQL (see bench.py, CASES).

Each function takes (input_path, out_path), writes the rows it read to
out_path as Parquet and returns the number of rows. bench.py times it in its
own process and runs it once more in a fresh subprocess for the peak RSS,
importing it by module and name, so it must live at module level in a module
of bench/. Heavy imports go inside the function: bench.py imports a case's
`requires` modules before the timed runs (so the first run does not pay for
them), and the peak-RSS subprocess records the peak after those imports too.
"""

from __future__ import annotations


def pandas_read_xml(input_path: str, out_path: str) -> int:
    """pandas.read_xml(input, xpath='//event', parser='lxml') -> DataFrame.to_parquet (pyarrow).

    pandas reads one level: the attributes and the text of the direct
    children of each <event>. Elements that have children of their own
    (<tags>, <scores>, <device>, <geo>) come out as all-null columns; their
    contents are not read into the frame (lxml still parses them).
    """
    import pandas as pd

    df = pd.read_xml(input_path, xpath="//event", parser="lxml")
    df.to_parquet(out_path, index=False, engine="pyarrow")
    return len(df)
