"""Opens each group of an InferenceData Zarr store with xarray and prints it
as JSON (dimensions, dtypes, values, coordinates, attributes) for
export's TestZarrInXarray. Usage: read_inferencedata.py STORE GROUP..."""
import json
import sys
import warnings

# xarray warns (RuntimeWarning) when a store lacks consolidated metadata
warnings.simplefilter("error", RuntimeWarning)
import xarray as xr  # noqa: E402

out = {}
for group in sys.argv[2:]:
    ds = xr.open_zarr(sys.argv[1], group=group)
    g = {"attrs": dict(ds.attrs), "sizes": dict(ds.sizes), "vars": {}, "coords": {}}
    for name, v in ds.data_vars.items():
        g["vars"][name] = {"dims": list(v.dims), "dtype": str(v.dtype), "values": v.values.ravel().tolist()}
    for name, c in ds.coords.items():
        g["coords"][name] = {"dims": list(c.dims), "values": c.values.ravel().tolist()}
    out[group] = g
json.dump(out, sys.stdout)
