"""Session 35: the SASS lines of an ncu source page (CSV) with the most stall samples."""
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
head_i = next(i for i, r in enumerate(rows) if "Source" in r)
head = rows[head_i]
body = rows[head_i + 1:]
col = next((i for i, h in enumerate(head) if h.startswith("Warp Stall Sampling (All")), None)
print("columns:", head)
if col is None:
    sys.exit(0)
def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0
total = sum(num(r[col]) for r in body if len(r) > col)
body.sort(key=lambda r: -num(r[col]) if len(r) > col else 0)
src = head.index("Source")
keep = [i for i, h in enumerate(head)
        if "Stall" in h or "L1" in h or "Address" in h or "Executed" in h]
print("total samples", total)
for r in body[:45]:
    print(f"{num(r[col]) / total:6.3f}", r[src][:90], "|",
          " ".join(f"{head[i][:18]}={r[i]}" for i in keep[:8]))
