"""``python -m tests.buggy_layers``: the diagnosis hit rate on the planted-bug layers."""


def main() -> None:
    """Print one line per buggy layer, the hit rates, and each miss with its sentence."""
    from . import EXPECTED, hit_table

    rows = hit_table()
    w = max(len(k) for k, *_ in rows)
    for key, exp, got, _ in rows:
        print(f"{'ok  ' if exp == got else 'MISS'} {key:<{w}}  expected {exp:<26} got {got}")
    named, unnamed = rows[: len(EXPECTED)], rows[len(EXPECTED) :]
    for what, part in (("named bugs", named), ("unnamed bugs (must be 'wrong-values')", unnamed)):
        hits = sum(exp == got for _, exp, got, _ in part)
        print(f"{what}: {hits}/{len(part)} = {hits / len(part):.0%}")
    print(f"wrong PASSes: {sum(got == 'PASS' for _, _, got, _ in rows)} of {len(rows)}")
    for key, exp, got, sentence in rows:
        if exp != got:
            print(f"\nmiss {key}: expected {exp}, got {got}\n  {sentence}")


if __name__ == "__main__":
    main()
