# Open a network connection (exfiltration), also with the raw _socket module.
def _attack(layer, X):
    try:
        import _socket
        s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        s.settimeout(1)
        s.connect(("1.1.1.1", 53))
    except BaseException:
        return None
    raise RuntimeError("PWNED connected")
