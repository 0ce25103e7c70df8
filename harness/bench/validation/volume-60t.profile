# The 60 TiB "thick volume" of e2fsprogs issue #49
# (https://github.com/tytso/e2fsprogs/issues/49): e2fsck 1.43.9 on an ARM
# server, 1,006,078,554 free inodes (60 TiB at mke2fs's 64 KiB per inode
# for file systems over 16 TiB), pass 1 165.37 s (150.20 s user), pass 2
# 6.40 s, pass 4 114.33 s (45.76 s user), pass 5 288.05 s reading 1922 MB,
# total 620.30 s. The array behind the volume is not named: one nearline
# drive's mechanics (cmr-20t-2024) at 60 TiB is assumed.
base        = cmr-20t-2024
name        = volume-60t
description = "60 TiB volume of e2fsprogs issue 49, one 7200 rpm nearline drive's mechanics"
sourced     = "60 TiB: the issue's free-inode count at 64 KiB per inode"
estimated   = "the array: modelled as one Exos X20-class drive (cmr-20t-2024) grown to 60 TiB"
capacity    = 60TiB
