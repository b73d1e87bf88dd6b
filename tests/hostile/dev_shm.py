# Write into /dev/shm and other shared places that could survive the sandbox.
for _p in ("/dev/shm/pwn", "/dev/pwn", "/run/pwn", "/var/tmp/pwn"):
    try:
        open(_p, "w").write("x")
    except BaseException:
        pass
