# A 2007 server's RAID 5: five roadmap-2006 disks (500 GB, 7,200 rpm),
# four of data, behind a controller with a 256 MiB battery-backed write
# cache.  Modelled as one disk of the array's size and speed, not as
# member disks: a request waits for one disk's seek and rotation, as a
# single-threaded checker's reads do; sequential transfers run at four
# disks' rate.  The RAID 5 small-write penalty (a read-modify-write of
# data and parity) is not modelled: the write cache hides most of it.
base = roadmap-2006
name = raid5-2007
description = RAID 5 of 5 x 500 GB 7200 rpm (2007), as one disk of the array's size and speed
estimated = the array as one disk: capacity and bandwidth 4 x roadmap-2006; seek and rotation one disk's; the 256 MiB controller cache
capacity = 2TB
bandwidth_mbps = 500
cache = 256MiB
interface_mbps = 1000
