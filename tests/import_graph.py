"""The one cycle finder of the import-layer tests (tests/test_gradcheck_layers.py for gradcheck,
tests/test_autoprop_core_imports.py for autoprop.core)."""


def first_cycle(graph: dict[str, set[str]]) -> str | None:
    """The first import cycle of ``graph`` (module -> the modules it imports), visited in sorted order,
    as ``a -> b -> a``; None when there is none. An imported name outside ``graph`` is a leaf."""
    done, path = set(), []

    def visit(m):
        if m in path:
            return " -> ".join(path[path.index(m):] + [m])
        if m in done or m not in graph:
            return None
        path.append(m)
        for n in sorted(graph[m]):
            if found := visit(n):
                return found
        path.pop()
        done.add(m)
        return None

    return next((c for m in sorted(graph) if (c := visit(m))), None)
