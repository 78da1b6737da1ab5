"""The layers of burnedge.nn, with torch.nn's constructor signatures, defaults and parameter names."""
