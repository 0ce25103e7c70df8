# The laptop disk under Ted Ts'o's 2008 e2fsck demonstration ("Fast ext4
# fsck times", https://thunk.org/tytso/blog/2008/08/08/fast-ext4-fsck-times/):
# a 128 GB ext4 root file system on "a laptop drive". The drive is not
# named; a 2008 2.5-inch 5400 rpm drive (Hitachi Travelstar 5K320 class)
# is assumed. The disk is the file system: predict makes the file system
# on the whole profile.
base        = laptop-5400
name        = laptop-2008
description = "2008 2.5-inch 5400 rpm laptop disk holding a 128 GiB file system"
sourced     = "5400 rpm; seeks 1.0/12/20 ms read, 1.1/13/21 ms write; 8 MB buffer: Hitachi Travelstar 5K320 OEM specification, section 4.4.2 (https://manualsdump.com/en/manuals/hitachi-hts543280l9a300-hts543212l9sa00/112335/19)"
estimated   = "that Ts'o's drive was of this class; capacity = the 128 GiB file system; mean 50 MB/s (outer 67, zone ratio 2), a 320 GB 5400 rpm drive of 2008"
capacity    = 128GiB
bandwidth_mbps = 50
