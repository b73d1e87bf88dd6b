# Fill the disk with many capped files, in every writable place.
import os
_blob = b"x" * (1 << 20)
for _d in ("/tmp", ".", "@SUBS@", "@OUT@"):
    for _i in range(3000):
        try:
            with open(f"{_d}/fill_{_i}.bin", "wb") as _f:
                _f.write(_blob)
        except BaseException:
            break
