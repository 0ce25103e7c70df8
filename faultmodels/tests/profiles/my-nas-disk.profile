# A user's own disk: a 12 TB NAS drive, from its datasheet.
name        = nas-12t
description = "12 TB NAS disk (example profile; # inside quotes is text)"
sourced     = capacity, rpm, bandwidth, cache: vendor datasheet
estimated   = zone ratio, seeks, heads

kind        = hdd
capacity    = 12TB
sector      = 4096
rpm         = 7200
bandwidth_mbps = 196      # mean over the disk; outer 260
zone_ratio  = 1.9
heads       = 16
seek_t2t_ms = 0.5
seek_avg_ms = 8.5
seek_full_ms = 17
cache       = 256MiB
readahead   = 4MiB
interface_mbps = 600
