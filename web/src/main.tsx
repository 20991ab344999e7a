import { lazy, StrictMode, Suspense, type ComponentType, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { Layout } from './components/Layout.tsx';
// The page a sign-in lands on is in the first chunk: waiting for a lazy one there costs most of a second.
import { Collections } from './pages/Collections.tsx';
import { NotFound } from './pages/NotFound.tsx';
import { OAuthConsent } from './pages/OAuthConsent.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { SessionProvider, useSession } from './session.tsx';
import './styles.css';

// Every other view is its own chunk, kept out of the first load and fetched in the background (below).
const loaders: Array<() => Promise<unknown>> = [];
const view = <K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K) => {
  loaders.push(load);
  return lazy(() => load().then((m) => ({ default: m[name] })));
};
const CollectionMemories = view(() => import('./pages/CollectionMemories.tsx'), 'CollectionMemories');
const CollectionHealth = view(() => import('./pages/CollectionHealth.tsx'), 'CollectionHealth');
const Connections = view(() => import('./pages/Connections.tsx'), 'Connections');
const Files = view(() => import('./pages/Files.tsx'), 'Files');
const Grants = view(() => import('./pages/Grants.tsx'), 'Grants');
const Hygiene = view(() => import('./pages/Hygiene.tsx'), 'Hygiene');
const Keys = view(() => import('./pages/Keys.tsx'), 'Keys');
const Ledger = view(() => import('./pages/Ledger.tsx'), 'Ledger');
const MemoryPage = view(() => import('./pages/MemoryPage.tsx'), 'MemoryPage');
const People = view(() => import('./pages/People.tsx'), 'People');
const Teams = view(() => import('./pages/Teams.tsx'), 'Teams');
const Operator = view(() => import('./pages/Operator.tsx'), 'Operator');
const Remember = view(() => import('./pages/Remember.tsx'), 'Remember');
const Review = view(() => import('./pages/Review.tsx'), 'Review');
const Search = view(() => import('./pages/Search.tsx'), 'Search');
const Settings = view(() => import('./pages/Settings.tsx'), 'Settings');
const Status = view(() => import('./pages/Status.tsx'), 'Status');
const Usage = view(() => import('./pages/Usage.tsx'), 'Usage');

/** Pages that need a key send a signed-out visitor to the sign-in page. */
function SignedIn({ children }: { children: ReactNode }) {
  return useSession().me ? children : <Navigate to="/" replace />;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <SessionProvider>
      <BrowserRouter>
        <Suspense fallback={<p className="muted pad">Loading…</p>}>
          <Routes>
            <Route path="/" element={<SignIn />} />
            <Route path="/status" element={<Status />} />
            <Route path="/oauth/consent" element={<OAuthConsent />} />
            <Route
              element={
                <SignedIn>
                  <Layout />
                </SignedIn>
              }
            >
              <Route path="/collections" element={<Collections />} />
              <Route path="/collections/:name" element={<CollectionMemories />} />
              <Route path="/collections/:name/memories/:id" element={<MemoryPage />} />
              <Route path="/collections/:name/remember" element={<Remember />} />
              <Route path="/collections/:name/health" element={<CollectionHealth />} />
              <Route path="/collections/:name/hygiene" element={<Hygiene />} />
              <Route path="/collections/:name/grants" element={<Grants />} />
              <Route path="/search" element={<Search />} />
              <Route path="/review" element={<Review />} />
              <Route path="/files" element={<Files />} />
              <Route path="/connections" element={<Connections />} />
              <Route path="/keys" element={<Keys />} />
              <Route path="/people" element={<People />} />
              <Route path="/teams" element={<Teams />} />
              <Route path="/settings" element={<Settings />} />
              <Route path="/usage" element={<Usage />} />
              <Route path="/usage/ledger" element={<Ledger />} />
              <Route path="/operator" element={<Operator />} />
              {/* Any other address: signed in, the navigation and a way home; signed out, the sign-in page. */}
              <Route path="*" element={<NotFound />} />
            </Route>
          </Routes>
        </Suspense>
      </BrowserRouter>
    </SessionProvider>
  </StrictMode>,
);

// Once the first page shows, the other views' chunks load in the background, so opening one later does not wait.
setTimeout(() => loaders.forEach((load) => void load()), 500);
