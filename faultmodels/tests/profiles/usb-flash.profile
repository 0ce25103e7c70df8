name = usb-flash
kind = ssd
capacity = 64GB
bandwidth_mbps = 150
write_bandwidth_mbps = 40
read_latency_ms = 0.5
write_latency_ms = 2
interface_mbps = 400
