"""`opscan zoo`: scan a whole model zoo and rank which kernels unblock the most models.

Pipeline: entries (expand SOURCES into `ZooEntry`s) -> runner (one process per model, local
pool or Ray, results cached per model/options/opdb) -> backlog (pandas: greedy kernel
backlog, models x gaps matrix, release comparison) -> render (md, html, csv, xlsx, json).
"""
