package dirzip

import "syscall"

// openNoATime opens a file without updating its access time (Linux).
const openNoATime = syscall.O_NOATIME
