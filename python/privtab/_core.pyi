# Type stubs of the Rust extension module privtab._core (checked by mypy.stubtest).
# Arrays are numpy arrays; see the Python wrappers for the documented public API.


__version__: str

# --- noise (rust/privtab-py/src/noise.rs) ---

# --- encode (rust/privtab-py/src/encode.rs) ---

# --- counts (rust/privtab-py/src/counts.rs) ---

# --- partition (rust/privtab-py/src/partition.rs) ---
