// Compiled code of HotSpot turns a null dereference into a SIGSEGV that its own handler turns
// into a NullPointerException (implicit null checks): a fault handled by the application.
public class ImplicitNullChecks {
	static int first(int[] a) {
		return a[0];
	}

	public static void main(String[] args) {
		int caught = 0;
		long sum = 0;
		for (int i = 0; i < 200000; i++) {
			try {
				sum += first(i % 1000 == 0 ? null : new int[] {i});
			} catch (NullPointerException e) {
				caught++;
			}
		}
		System.out.println("caught " + caught + " sum " + sum);
	}
}
