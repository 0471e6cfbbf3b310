pytest_plugins = ["suite.pytest_plugin"]
