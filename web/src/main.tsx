import { StrictMode, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { Layout } from './components/Layout.tsx';
import { CollectionMemories } from './pages/CollectionMemories.tsx';
import { CollectionHealth } from './pages/CollectionHealth.tsx';
import { Collections } from './pages/Collections.tsx';
import { Connections } from './pages/Connections.tsx';
import { Files } from './pages/Files.tsx';
import { Grants } from './pages/Grants.tsx';
import { Hygiene } from './pages/Hygiene.tsx';
import { Keys } from './pages/Keys.tsx';
import { MemoryPage } from './pages/MemoryPage.tsx';
import { Operator } from './pages/Operator.tsx';
import { Remember } from './pages/Remember.tsx';
import { Search } from './pages/Search.tsx';
import { Settings } from './pages/Settings.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { Status } from './pages/Status.tsx';
import { Usage } from './pages/Usage.tsx';
import { SessionProvider, useSession } from './session.tsx';
import './styles.css';

/** Pages that need a key send a signed-out visitor to the sign-in page. */
function SignedIn({ children }: { children: ReactNode }) {
  return useSession().me ? children : <Navigate to="/" replace />;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <SessionProvider>
      <BrowserRouter>
        <Routes>
          <Route path="/" element={<SignIn />} />
          <Route path="/status" element={<Status />} />
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
            <Route path="/files" element={<Files />} />
            <Route path="/connections" element={<Connections />} />
            <Route path="/keys" element={<Keys />} />
            <Route path="/settings" element={<Settings />} />
            <Route path="/usage" element={<Usage />} />
            <Route path="/operator" element={<Operator />} />
          </Route>
          <Route path="*" element={<p className="pad">No such page. <a href="/collections">Collections</a></p>} />
        </Routes>
      </BrowserRouter>
    </SessionProvider>
  </StrictMode>,
);
