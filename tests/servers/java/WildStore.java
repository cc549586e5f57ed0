// A store to address 16 through sun.misc.Unsafe: a SIGSEGV in the VM's own code
// (Unsafe_PutLong), which HotSpot's handler reports in its hs_err file before it aborts.
import java.lang.reflect.Field;

public class WildStore {
	public static void main(String[] args) throws Exception {
		Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
		f.setAccessible(true);
		sun.misc.Unsafe unsafe = (sun.misc.Unsafe) f.get(null);
		unsafe.putAddress(16, 1);
	}
}
