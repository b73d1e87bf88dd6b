# One file far beyond the file-size limit.
try:
    with open("/tmp/big.bin", "wb") as _f:
        for _i in range(400):
            _f.write(b"x" * (1 << 20))
except BaseException:
    pass
