"""``python -m tests.buggy_layers``: the diagnosis hit rate on the planted-bug layers."""

if __name__ == "__main__":
    from tests.buggy_layers import hit_table

    rows = hit_table()
    hits = sum(exp == got for _, exp, got, _ in rows)
    passes = sum(got == "PASS" for _, _, got, _ in rows)
    w = max(len(k) for k, *_ in rows)
    for key, exp, got, sentence in rows:
        print(f"{'ok  ' if exp == got else 'MISS'} {key:<{w}}  expected {exp:<26} got {got}")
    print(f"\nhit rate: {hits}/{len(rows)} = {hits / len(rows):.0%}; wrong PASSes: {passes}")
    for key, exp, got, sentence in rows:
        if exp != got:
            print(f"\nmiss {key}: expected {exp}, got {got}\n  {sentence}")
