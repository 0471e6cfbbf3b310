import os

# WebGPU kernels use the second grid dimension from 16,384 workgroups on in test sessions
# (backends/webgpu.py GRID_LIMIT_ENV), so test sizes cover workgroup_id.y; worker processes
# inherit it. An explicit value in the environment stands.
os.environ.setdefault("SOLBENCH_WEBGPU_MAX_GROUPS", "16384")

pytest_plugins = ["suite.pytest_plugin"]
